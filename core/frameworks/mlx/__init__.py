"""MLX: its parts of the workloads, imported only in a run's child process."""
