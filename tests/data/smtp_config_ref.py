#!/usr/bin/env python3
"""Writes tests/data/smtp-config.suricata-8.0.6.json: the reference's records for each
case of tests/smtp_config.rs (the `app-layer.protocols.smtp.*` keys and the eve-log
`smtp` options), on smtp-mime.pcap and smtp-headers.pcap with smtp-config.rules.

    python3 smtp_config_ref.py ../../../shared > smtp-config.suricata-8.0.6.json

Each case runs the reference (`tools/reference/suricata` with the stock suricata.yaml,
edited as the case says) and keeps, per pcap, sorted rows: `smtp` records (client
port, tx_id, smtp, email), `fileinfo` (port, name, size, state, email), anomalies
(port, anomaly, tx_id) and alerts (port, sid), and the packet (`pcap_cnt`) of each
alert of the large-attachment flow (port 43003). The BDAT session of smtp-mime.pcap
is left out (a known difference: tests/smtp_mime_eve.rs).
"""
import json
import os
import subprocess
import sys
import tempfile

CUSTOM = "[reply_to, bcc, message-id, Subject, x_mailer, user-agent, received, x-originating-ip, in-reply-to, references, importance, priority, sensitivity, organization, content-md5, date, relays]"
# name: (--set values, edits of the stock suricata.yaml (old line text, new))
CASES = {
    "base": ([], []),
    "custom": ([], [("#custom: [received, x-mailer, x-originating-ip, relays, reply-to, bcc]", "custom: " + CUSTOM),
                    ("#md5: [body, subject]", "md5: [body, subject]")]),
    "custommd5": (["app-layer.protocols.smtp.mime.body-md5=yes"],
                  [("#custom: [received, x-mailer, x-originating-ip, relays, reply-to, bcc]", "custom: " + CUSTOM),
                   ("#md5: [body, subject]", "md5: [body, subject]")]),
    "extended": ([], [("#extended: yes # enable", "extended: yes # enable")]),
    "raw": (["app-layer.protocols.smtp.raw-extraction=yes", "app-layer.protocols.smtp.mime.decode-mime=no"], []),
    "rawboth": (["app-layer.protocols.smtp.raw-extraction=yes"], []),
    "nodecode": (["app-layer.protocols.smtp.mime.decode-mime=no"], []),
    "nob64": (["app-layer.protocols.smtp.mime.decode-base64=no"], []),
    "noqp": (["app-layer.protocols.smtp.mime.decode-quoted-printable=no"], []),
    "nourls": (["app-layer.protocols.smtp.mime.extract-urls=no"], []),
    "schemes": ([], [("#extract-urls-schemes: [http, https, ftp, mailto]", "extract-urls-schemes: [http, HTTPS, ftp://, mailto]")]),
    "logscheme": ([], [("#extract-urls-schemes: [http, https, ftp, mailto]", "extract-urls-schemes: [http, https]"),
                       ("#log-url-scheme: yes", "log-url-scheme: yes")]),
    "minsize": (["app-layer.protocols.smtp.inspected-tracker.content-inspect-min-size=1000000",
                 "app-layer.protocols.smtp.inspected-tracker.content-limit=0"], []),
    "limit": (["app-layer.protocols.smtp.inspected-tracker.content-limit=1000"], []),
}
PCAPS = ["smtp-mime", "smtp-headers"]


def port(e):
    return e["src_port"] if e.get("dest_port") == 25 else e["dest_port"]


def rows(events):
    bdat = {port(e) for e in events if e["event_type"] == "smtp"
            and e["smtp"].get("helo") == "bdat.example.test"}
    out, packets = [], []
    for e in events:
        t = e["event_type"]
        if t not in ("smtp", "fileinfo", "alert", "anomaly") or port(e) in bdat:
            continue
        if t == "smtp":
            r = ["smtp", port(e), e.get("tx_id"), e.get("smtp"), e.get("email")]
        elif t == "fileinfo":
            f = e["fileinfo"]
            r = ["fileinfo", port(e), f.get("filename"), f.get("size"), f.get("state"), e.get("email")]
        elif t == "anomaly":
            r = ["anomaly", port(e), e["anomaly"], e.get("tx_id")]
        else:
            r = ["alert", port(e), e["alert"]["signature_id"]]
            if port(e) == 43003:
                packets.append([e["alert"]["signature_id"], e["pcap_cnt"]])
        out.append(r)
    out.sort(key=json.dumps)
    packets.sort()
    return out, packets


def main():
    shared = sys.argv[1]
    ref = os.path.join(shared, "tools/reference")
    here = os.path.dirname(os.path.abspath(__file__))
    stock = open(os.path.join(ref, "suricata.yaml")).read()
    result = {}
    for name, (sets, edits) in CASES.items():
        yaml = stock
        for old, new in edits:
            assert yaml.count(old) == 1, old
            yaml = yaml.replace(old, new)
        result[name] = {}
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "suricata.yaml")
            open(cfg, "w").write(yaml)
            for p in PCAPS:
                out = os.path.join(tmp, p)
                os.mkdir(out)
                args = [os.path.join(ref, "suricata"), "-c", cfg,
                        "--set", "classification-file=" + os.path.join(ref, "classification.config"),
                        "--set", "reference-config-file=" + os.path.join(ref, "reference.config"),
                        "--set", "threshold-file=" + os.path.join(ref, "threshold.config"),
                        "--set", "default-rule-path=" + os.path.join(ref, "rules"),
                        "--set", "detect.sgh-mpm-caching-path=" + tmp,
                        "-r", os.path.join(here, p + ".pcap"),
                        "-S", os.path.join(here, "smtp-config.rules"), "-l", out, "-k", "none"]
                for s in sets:
                    args += ["--set", s]
                subprocess.run(args, check=True, capture_output=True)
                events = [json.loads(l) for l in open(os.path.join(out, "eve.json"))]
                r, packets = rows(events)
                result[name][p] = {"rows": r, "packets": packets}
    json.dump(result, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
