class Plugin:
    registry = {}

    def __init_subclass__(cls, fmt=None, **kwargs):
        super().__init_subclass__(**kwargs)
        Plugin.registry[fmt or cls.__name__] = cls


class Csv(Plugin, fmt="csv"):
    pass


class Tsv(Csv):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)


class Excel(Tsv):
    pass


class Standalone:
    def __init_subclass__(cls):
        raise TypeError("never subclassed")


def register():
    class Json(Plugin):
        pass
    return Json


def dynamic():
    return type("Xml", (Plugin,), {})


register()
dynamic()
