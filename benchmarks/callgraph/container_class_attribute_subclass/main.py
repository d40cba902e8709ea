def iso_datetime(value):
    return "dt:" + value


def iso_date(value):
    return "d:" + value


class DateTime:
    FORMATTERS = {"iso": iso_datetime}

    def format(self, value, how="iso"):
        formatter = self.FORMATTERS.get(how)
        return formatter(value)


class Date(DateTime):
    FORMATTERS = {"iso": iso_date}


DateTime().format("x")
Date().format("y")
