"""What a framework's part of a workload builds with, below the frameworks and the workload
protocols: result rows (rows), correctness checks (checks), what a training step takes
(training), encoder sizes (encoders), naming an out-of-memory error (errors), the share of free
memory a run may fill (headroom), the LLM presets' shapes and arithmetic (llm_shapes), what
the LLM engines that build the shape share (llm_engine) and the ceilings measured before on the
device (ceilings: read from a store the caller opened, never opening one). A framework package may import these, never a workload protocol
(siliconbench/core/workloads/)."""
