class Settings:
    def load(self):
        return {}

settings = Settings()
