def on_save(record):
    return record


def on_load(record):
    return record


SAVE = on_save
