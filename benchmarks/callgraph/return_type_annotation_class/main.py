import typing as t


class Shell:
    def __init__(self, name):
        self.name = name

    def source(self):
        return self.name

    def complete(self):
        return [self.name]


class Bash(Shell):
    def source(self):
        return "bash " + super().source()


_SHELLS: t.Dict[str, t.Type[Shell]] = {"bash": Bash, "sh": Shell}


def shell_class(name: str) -> t.Optional[t.Type[Shell]]:
    return _SHELLS.get(name)


def complete(name):
    cls = shell_class(name)
    if cls is None:
        return None
    shell = cls(name)
    shell.source()
    return shell.complete()


complete("bash")
complete("sh")
