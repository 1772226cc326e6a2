"""The detection core: the pure pipeline every runner drives (the live worker, the backtest, the twin).

Validation, classification, the repeat-offender rule, the sample folding and peer comparison, the
planner and the lifecycle fold. Nothing here imports a Kafka or Faust client (a contract says so).
"""

from streams.core.detection import DetectionCore
from streams.core.stages import PeerStep, peer_step, repeat_step
from streams.core.state import CoreState, KeyedState

__all__ = ["CoreState", "DetectionCore", "KeyedState", "PeerStep", "peer_step", "repeat_step"]
