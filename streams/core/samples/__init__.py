"""Host windows of the samples stage: one decoded sample at a time, folded per partition."""
