class Square:
    @staticmethod
    def unit():
        return Square()
