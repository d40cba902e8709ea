class Conn:
    def send(self):
        return 1

def connect():
    return Conn()

def main():
    return connect().send()
