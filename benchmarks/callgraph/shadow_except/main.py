def helper():
    return 1


def run():
    try:
        pass
    except Exception as helper:
        helper()
