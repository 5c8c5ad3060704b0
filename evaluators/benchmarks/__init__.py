"""The benchmarks, one package each, discovered by the registry: nothing outside a package names one."""
