"""The detection core: the pure pipeline every runner drives (the live worker, the backtest, the twin).

Validation, classification, the repeat-offender rule, the sample folding and peer comparison, the
planner and the lifecycle fold. Nothing here imports a Kafka or Faust client (a contract says so).
"""
