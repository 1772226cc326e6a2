"""Everything that scores the pipeline against the simulator's ground truth.

Detections (repeat offenders, slow hosts: precision, recall, time to detect) for ``fleetpulse
score``, the demo and the fault suite. It sits in the application shell because it joins the
simulator's truth files with the detectors' findings and their policy.
"""
