"""Control on the Model's graphs: discrete control laws, the sampled closed
loop discretised exactly as the FMU runs it, its cost and gradient, gain
tuning and point-to-point trajectory planning."""
