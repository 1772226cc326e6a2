"""``fleetpulse backtest``: a lake's history replayed through a policy with the detectors' and planner's own code.

It sits in the application shell because it joins the detectors (streams), the lake (analytics) and
the scoring against the simulator's truth (``fleetpulse.evaluation``). Nothing is imported here, so
that loading the command for ``fleetpulse --help`` does not load the detectors: import the modules.
"""
