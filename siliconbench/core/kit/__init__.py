"""What a framework's part of a workload builds with, below the frameworks and the workload
protocols: result rows (rows), correctness checks (checks), what a training step takes
(training), encoder sizes (encoders) and naming an out-of-memory error (errors). A framework
package may import these, never a workload protocol (siliconbench/core/workloads/)."""
