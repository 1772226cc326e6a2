"""The maintenance planner: findings -> actions within domain budgets, in event-time order."""
