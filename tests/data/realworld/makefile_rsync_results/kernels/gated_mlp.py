from kernels.results.table import format_table
