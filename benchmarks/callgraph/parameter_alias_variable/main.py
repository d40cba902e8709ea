import hooks
from hooks import SAVE, on_load

LOAD = on_load


def notify(callback, record):
    return callback(record)


def run():
    # Each argument is a module-level name bound to a function: the one imported from
    # another module, one of this module, and the first read as an attribute of its module.
    notify(SAVE, 1)
    notify(LOAD, 2)
    notify(hooks.SAVE, 3)


run()
