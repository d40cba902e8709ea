class Registry:
    def register(self, item):
        return item


class Markdown:
    def __init__(self):
        self.treeprocessors = Registry()

    def registerExtension(self, extension):
        return extension


class Other:
    def registerExtension(self, extension):
        return None


class Extension:
    def extend(self, md):
        md.treeprocessors.register(1)
        md.registerExtension(self)


def main():  # extend is a hook the host calls with its Markdown
    return Extension(), Markdown(), Other()
