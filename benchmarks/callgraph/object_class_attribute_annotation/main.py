class Log:
    def write(self, s):
        return s

class Service:
    log: Log

    def run(self):
        return self.log.write("x")
