def format_table(rows):
    return rows
