from config import settings

def run():
    return settings.load()
