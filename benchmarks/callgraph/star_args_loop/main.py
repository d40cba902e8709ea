class Length:
    def __call__(self, value):
        return len(value) > 0


class Email:
    def __call__(self, value):
        return "@" in value


def run_all(label, *checks):
    for check in checks:
        check(label)


run_all("a@b", Length(), Email())
