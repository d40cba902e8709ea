class Filter:
    def process(self, node):
        name = "_process_{kind}".format(kind=type(node).__name__)
        return getattr(self, name.lower(), self._process_default)(node)

    def _process_default(self, node):
        return node

    def _process_where(self, node):
        return "where"

    def _process_case(self, node):
        return "case"


class Where:
    pass


def main():
    return Filter().process(Where())
