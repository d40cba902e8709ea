def default():
    return 0


def special():
    return 1


def run(handler=None):
    if handler is None:
        handler = default
    return handler()


class Job:
    def start(self):
        return 2


def launch(job=None):
    if job is None:
        job = Job()
    return job.start()


run()
run(special)
launch()
