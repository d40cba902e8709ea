def group_comments(statement):
    return statement


def group_brackets(statement):
    return statement


def group_values(statement):
    return statement


def group(statement):
    for step in [
        group_comments,  # first, so that later steps skip them
        # brackets before the rest
        group_brackets,
        group_values,
    ]:
        step(statement)
    return statement


def main():
    return group("select 1")
