"""Control on the Model's graphs: scenarios and their tables (references, motion profiles), discrete
control laws, the sampled closed loop discretised exactly as the FMU runs it, its cost and gradient, gain
tuning, and the planners (serial arms' point-to-point moves, a Delta robot's pick-and-place)."""
