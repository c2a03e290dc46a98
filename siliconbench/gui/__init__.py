"""SiliconBench's desktop app (PySide6 + pyqtgraph). It knows siliconbench/core/, never the ML frameworks:
runs happen in child processes driven from QThreads."""
