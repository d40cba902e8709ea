class Extractor:
    def close(self):
        return None


class TarExtractor(Extractor):
    def close(self):
        return None


def made_here():
    p = Extractor()
    p.close()
    Extractor().close()


def passed_in(p):
    p.close()


def run():
    made_here()
    passed_in(TarExtractor())


run()
