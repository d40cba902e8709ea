class Dispatcher(dict):
    """A dispatch table: a dict made from (name, handler) pairs."""

    def __init__(self, items=()):
        dict.__init__(self, items)


class Phase:
    def process(self, token):
        func = self.handlers[token]
        return func(self, token)


class InBody(Phase):
    def start_html(self, token):
        return "html"

    def start_body(self, token):
        return "body"

    def unlisted(self, token):
        return "never in the table"

    # longer than a value is stored cut (240 characters): a dispatch table is kept whole
    handlers = Dispatcher([
        ("html", start_html),
        (("address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
          "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav", "ol", "p",
          "section", "summary", "ul"), start_body),
    ])


def shout(text):
    return text.upper()


def whisper(text):
    return text.lower()


STYLES = dict([("loud", shout), ("soft", whisper)])


def say(style, text):
    return STYLES[style](text)


def main():
    InBody().process("html")
    InBody().unlisted("x")
    return say("loud", "hi")
