"""What a person sees on a terminal: styles, widths, markdown, tables, lines."""
