def default_get(obj, key):
    return getattr(obj, key, None)


def get_attribute(obj, key):
    return obj.get(key)


def get_value(obj, key, accessor=None):
    accessor_func = accessor or default_get
    return accessor_func(obj, key)


def serialize(obj, key, accessor=None):
    return get_value(obj, key, accessor=accessor)


serialize({"a": 1}, "a", accessor=get_attribute)
serialize(object(), "b")
