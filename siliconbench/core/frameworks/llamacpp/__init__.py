"""llama.cpp through llama-cpp-python: its adapter (the devices llama.cpp's backends see), the
GGUF model files made from the LLM presets' shapes (models.py), its part of the llm workload
measured as llama-bench measures (llm.py), and host array ops for the run's own triad."""

from siliconbench.core.frameworks import FrameworkInfo

# PyPI has llama-cpp-python's source only: pip compiles llama.cpp (Metal on a Mac).
FRAMEWORK = FrameworkInfo(
    "llamacpp", "llama.cpp", "llama_cpp", "siliconbench.core.frameworks.llamacpp.adapter",
    "llamacpp", " (pip compiles it: a C++ compiler and cmake, about 20 minutes; on a Mac the "
    "Xcode command-line tools)", workloads=("llm",), rank=3)
