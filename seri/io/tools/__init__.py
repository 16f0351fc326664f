"""Running the model's tools: files, search, shell, checkpoints, memory."""
