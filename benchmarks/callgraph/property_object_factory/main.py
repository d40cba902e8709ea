def header(name):
    def fget(response):
        return response.headers.get(name)

    def fset(response, value):
        response.headers[name] = value

    return property(fget, fset)


def parsed(name, parse):
    def fget(response):
        return parse(response.headers.get(name))

    return property(fget)


def parse_length(text):
    return int(text or 0)


class Response:
    def __init__(self):
        self.headers = {}
        self._status = 200

    def _status__get(self):
        return self._status

    def _status__set(self, value):
        self._status = value

    status = property(_status__get, _status__set)
    status_code = status  # the property object itself: reading it here runs nothing
    content_type = header("Content-Type")
    content_length = parsed("Content-Length", parse_length)


def main():
    response = Response()
    response.status = 404
    response.content_type = "text/plain"
    return response.status, response.content_type, response.content_length
