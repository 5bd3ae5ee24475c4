"""The load of a crash round: client threads that keep one plotqd busy until told to stop (or until
it dies), and the record of every answer it acknowledged.

Acknowledged means: a /run-data or /render 200 with its body, a turn's stream that reached done
(its events as read), a dataset version announced (a paste's 201 or a data turn's dataset event),
a confirm's 200, a session's 201. A turn whose stream ended without done (the server died) is kept
as interrupted with the last id read, for the resume check after the restart.

Against a cluster (crash_driver.py --cluster N) the workers are given every node's port and send
each request to one of them at random (a load balancer without sticky sessions: a session made on
one node, its turns sent to others); the driver takes a killed node's port out of the list and puts
the restarted node's in.
"""
import http.client
import random
import threading
import time

from plotq_client import Stream, new_session, read_to_done, request

TRANSPORT = (OSError, http.client.HTTPException, ValueError)

MPL = ("import os\nimport matplotlib.pyplot as plt\nTHEME = os.getenv('ANYPLOT_THEME', 'light')\n"
       "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot([1, 2, 3], [%d, 1, 2])\n"
       "fig.savefig(f'plot-{THEME}.png', dpi=200)\n")
PLOTLY = "import plotly.graph_objects as go\nfig = go.Figure(go.Scatter(x=[1, 2, 3], y=[%d, 1, 2]))\nfig.show()\n"


def data_code(n):
    return "import pandas as pd\ndf = pd.DataFrame({'x': list(range(%d)), 'y': [i * 0.5 for i in range(%d)]})\n" % (n, n)


def paste_text(n, seed):
    return "a,b\n" + "".join("%d,%d.5\n" % (i, (i * seed) % 97) for i in range(n))


class Record:
    """Everything acknowledged so far (all rounds), and what was sent. Thread-safe by one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = {}     # job key -> (path, body): the one payload each job id is ever sent with
        self.run_data = {}     # job id -> answer
        self.render = {}       # job id -> answer
        self.turns = []        # {user, session, turn, events, action, round}
        self.interrupted = []  # {user, session, turn, events, round}: read ready, never done
        self.versions = []     # {session, version, rows, confirmed, round}
        self.sessions = []     # session ids answered 201
        self.users = set()
        self.mismatch = []     # answers that differed from an earlier acknowledged one, inline
        self.sent_to = {}      # port -> job ids of every /run-data and /render request sent to it
        self.seq = 0

    def next_id(self, prefix):
        with self.lock:
            self.seq += 1
            return "%s-%d" % (prefix, self.seq)


class Workers:
    def __init__(self, port, record, rng, round_no, sessions):
        # One port, or a list of ports (a cluster's nodes: each request goes to one of them).
        self.ports = list(port) if isinstance(port, (list, tuple)) else [port]
        self.rec = record
        self.rng = random.Random(rng.random())
        self.round = round_no
        self.sessions = sessions  # user -> session id, kept across rounds (sessions outlive restarts)
        self.stop = threading.Event()
        self.threads = []
        self.tail = []  # (seconds, client) of the calls that were still running when stop was set

    # -- helpers
    @property
    def port(self):
        """The node this request goes to (the driver may swap the list while the threads run)."""
        ports = self.ports
        return ports[0] if len(ports) == 1 else self.rng.choice(ports)

    def session(self, user):
        if user not in self.sessions:
            sid = new_session(self.port, user)
            self.sessions[user] = sid
            with self.rec.lock:
                self.rec.sessions.append(sid)
                self.rec.users.add(user)
        return self.sessions[user]

    def turn(self, user, body, action, timeout=120):
        sid = self.session(user)
        st = Stream(self.port, "POST", "/v1/sessions/%s/messages" % sid, body, user=user, timeout=timeout)
        if st.status != 200:
            return None
        seen = []
        try:
            done = read_to_done(st, seen)
        except TRANSPORT:
            done = False
        finally:
            st.close()
        turn = seen[0]["data"]["turn"] if seen and seen[0]["event"] == "ready" else None
        for ev in seen:
            if ev["event"] == "dataset":
                with self.rec.lock:
                    self.rec.versions.append({"session": sid, "version": ev["data"]["version"],
                                              "rows": ev["data"]["rows"], "confirmed": False, "round": self.round})
        if turn is None:
            return None
        entry = {"user": user, "session": sid, "turn": turn, "events": seen, "action": action, "round": self.round}
        with self.rec.lock:
            (self.rec.turns if done else self.rec.interrupted).append(entry)
        return entry

    def job(self, prefix, path, make_body, store):
        """A new job id, or now and then one sent before (a retry): the same payload every time."""
        with self.rec.lock:
            old = [k for k in self.rec.requests if k.startswith(prefix + "-")]
        if old and self.rng.random() < 0.25:
            job_id = self.rng.choice(old)
        else:
            job_id = self.rec.next_id(prefix)
            with self.rec.lock:
                self.rec.requests[job_id] = (path, make_body(job_id))
        body = self.rec.requests[job_id][1]
        port = self.port
        with self.rec.lock:
            self.rec.sent_to.setdefault(port, set()).add(job_id)
        status, answer = request(port, "POST", path, body, user="svc", timeout=120)
        if status != 200:
            return
        with self.rec.lock:
            table = getattr(self.rec, store)
            if job_id in table and table[job_id] != answer:
                self.rec.mismatch.append((job_id, "a retry got another answer"))
            table.setdefault(job_id, answer)

    # -- the clients
    def plain(self, user):
        self.turn(user, {"text": "hello %d" % self.rng.randrange(1000)}, "none")

    def data_turn(self, user):
        n = self.rng.randrange(2, 40)
        self.turn(user, {"text": "make data", "action": {"kind": "data", "code": data_code(n),
                                                         "source_language": "python"}}, "data")

    def plot_turn(self, user):
        self.turn(user, {"text": "plot it", "action": {"kind": "plot", "code": MPL % self.rng.randrange(9),
                                                       "library": "matplotlib", "themes": ["light"]}}, "plot")

    def paste(self, user):
        sid = self.session(user)
        n = self.rng.randrange(2, 200)
        status, body = request(self.port, "POST", "/v1/sessions/%s/datasets" % sid,
                               {"text": paste_text(n, self.rng.randrange(1, 90))}, user=user)
        if status != 201:
            return
        entry = {"session": sid, "version": body["version"], "rows": body["rows"], "confirmed": False,
                 "round": self.round}
        with self.rec.lock:
            self.rec.versions.append(entry)
        if self.rng.random() < 0.6:
            status, body = request(self.port, "POST", "/v1/sessions/%s/datasets/%d/confirm" % (sid, entry["version"]),
                                   user=user)
            if status == 200 and body.get("confirmed") is True:
                with self.rec.lock:
                    entry["confirmed"] = True

    def run_data(self, _user):
        self.job("rd", "/run-data",
                 lambda j: {"job_id": j, "source": data_code(self.rng.randrange(2, 30)), "timeout_s": 20},
                 "run_data")

    def render(self, _user):
        self.job("rn", "/render", lambda j: {"job_id": j, "source": MPL % self.rng.randrange(9),
                                             "library": "matplotlib", "themes": ["light"], "timeout_s": 60},
                 "render")

    def figure(self, _user):
        # plotly through Chromium: the renderer is often starting or drawing when a kill comes
        self.job("rp", "/render", lambda j: {"job_id": j, "source": PLOTLY % self.rng.randrange(9),
                                             "library": "plotly", "themes": ["light"], "timeout_s": 60},
                 "render")

    def _loop(self, fn, user, pause):
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                fn(user)
            except TRANSPORT:
                pass
            finally:
                if self.stop.is_set():  # what the join waited for
                    self.tail.append((time.monotonic() - t0, fn.__name__))
            # Answers that take no sandbox come back at once: a pause keeps them from being all there is.
            if self.stop.wait(pause):
                return

    def start(self):
        plan = [(self.plain, "plain-1", 0.1), (self.plain, "plain-2", 0.1), (self.data_turn, "data-1", 0),
                (self.data_turn, "data-2", 0), (self.plot_turn, "plot-1", 0), (self.paste, "paste-1", 0.1),
                (self.run_data, "svc", 0.02), (self.run_data, "svc", 0.02), (self.render, "svc", 0.02),
                (self.figure, "svc", 0.02)]
        for fn, user, pause in plan:
            t = threading.Thread(target=self._loop, args=(fn, user, pause), daemon=True)
            t.start()
            self.threads.append(t)

    def join(self, timeout=60):
        self.stop.set()
        for t in self.threads:
            t.join(timeout)
        return [t for t in self.threads if t.is_alive()]
