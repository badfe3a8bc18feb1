"""Bot processes: their sandbox, seccomp filter, cores, stored code and the house bots."""
