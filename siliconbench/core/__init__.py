"""SiliconBench's core: measurement, runs, results and their store. No Qt here."""
