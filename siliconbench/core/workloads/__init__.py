"""The workloads' protocols, one module each, framework-neutral: what a workload measures, its
parameters and how its run drives a framework's part (siliconbench/core/frameworks/<name>/).
Each declares its WORKLOAD (siliconbench.core.catalogue.Workload); the catalogue finds them by
their files, so adding a workload is adding its module here."""
