def strict_zip(*columns):
    return list(zip(*columns))


def loose_zip(*columns):
    return list(zip(*columns))


def pick(strict):
    return strict_zip if strict else loose_zip


def rows(columns, strict=False):
    zipper = strict_zip if strict else loose_zip
    return zipper(*columns)


def rows_picked(columns, strict):
    return pick(strict)(*columns)


rows([[1], [2]])
rows([[1], [2]], strict=True)
rows_picked([[1], [2]], False)
rows_picked([[1], [2]], True)
