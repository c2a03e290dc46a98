"""llama.cpp through llama-cpp-python: its adapter (the devices llama.cpp's backends see), the
GGUF model files made from the LLM presets' shapes (models.py), its part of the llm workload
measured as llama-bench measures (llm.py), and host array ops for the run's own triad."""
