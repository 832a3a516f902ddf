"""Over-inference, self-monitoring, accumulation, judge-agreement and reward-accuracy statistics."""
