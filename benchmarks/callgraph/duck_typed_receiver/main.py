class Processor:
    def test(self, block):
        return False

    def run(self, block):
        raise NotImplementedError


class Paragraph(Processor):
    def test(self, block):
        return True

    def run(self, block):
        return block.strip()


class Job:
    def run(self, block):
        return block


class Rule:
    def __init__(self, *children):
        self.children = children


class Packed:
    def __init__(self, text):
        self.text = text

    @property
    def children(self):
        return []


def parse(processors, block):
    for processor in processors:
        if processor.test(block):
            return processor.run(block)


def show(node):
    if isinstance(node, Rule):
        return [show(child) for child in node.children]
    return node.text


def main():
    parse([Paragraph()], " text ")
    Job().run("x")
    show(Rule(Rule()))
    Packed("p")
