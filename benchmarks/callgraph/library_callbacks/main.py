import bisect
import heapq
import re
import signal
import threading
import weakref


class Text:
    def _upper(self, match):
        return match.group(0).upper()

    def shout(self, text):
        return re.sub("[a-z]+", self._upper, text)


def length(word):
    return len(word)


def on_signal(number, frame):
    return number


def cleanup():
    return None


def tick():
    return None


def rank(words):
    ordered = list(words)
    ordered.sort(key=length)
    kept = []
    for word in words:
        bisect.insort(kept, word, key=length)
    return heapq.nlargest(2, words, key=length)


def install(owner):
    signal.signal(signal.SIGTERM, on_signal)
    weakref.finalize(owner, cleanup)
    threading.Timer(1.0, tick)


def run():
    Text().shout("abc")
    rank(["a", "bb"])
    install(Text())


run()
