"""What workflows, activities and the API exchange: typed inputs and results, error types, search
attributes. One module per concept. Workflows import these modules, so they stay free of I/O."""
