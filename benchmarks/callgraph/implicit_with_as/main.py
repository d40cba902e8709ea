class Session:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def send(self):
        return 1

def open_session() -> Session:
    return Session()

def main():
    with open_session() as session:
        session.send()
