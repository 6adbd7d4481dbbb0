"""A test double of the official Python SDK's login and refresh (ekacare
0.1.2, github.com/eka-care/ekapython-sdk, commit ad34c95cfd79, "version
0.1.2": ekacare/auth/auth.py and ekacare/client.py), which PyPI would give
but this machine cannot reach. It sends exactly the SDK's requests, with
the same library (requests): the login body built as the SDK builds it
(client_id, client_secret, then api_key when one is set), sent with
json=, the client-id header on every request; the refresh on the first
version's route with the refresh token alone.

  python3 ekasdk_login.py BASE CLIENT_ID CLIENT_SECRET [API_KEY]

It prints {"login": {"status", "body"}, "refresh": {"status", "body"}}.
"""
import json
import sys
from urllib.parse import urljoin

import requests


class EkaCareClient:
    def __init__(self, client_id, client_secret, base_url, api_key=None):
        self.client_id = client_id
        self.client_secret = client_secret
        self.base_url = base_url
        self.api_key = api_key
        self.session = requests.Session()

    def request(self, method, endpoint, params=None, data=None, json=None, headers=None, files=None,
                auth_required=True):
        url = urljoin(self.base_url, endpoint)
        if headers is None:
            headers = {}
        if self.client_id:
            headers["client-id"] = self.client_id
        return self.session.request(method=method, url=url, params=params, data=data, json=json,
                                    headers=headers, files=files)

    def login(self):
        login_json = {
            "client_id": self.client_id,
            "client_secret": self.client_secret
        }
        if self.api_key is not None:
            login_json["api_key"] = self.api_key
        return self.request(method="POST", endpoint="/connect-auth/v1/account/login", json=login_json,
                            auth_required=False)

    def refresh_token(self, refresh_token):
        return self.request(method="POST", endpoint="/connect-auth/v1/account/refresh",
                            json={"refresh_token": refresh_token}, auth_required=False)


def main(argv):
    base, client_id, client_secret = argv[1], argv[2], argv[3]
    client = EkaCareClient(client_id, client_secret, base, argv[4] if len(argv) > 4 else None)
    login = client.login()
    out = {"login": {"status": login.status_code, "body": login.json()}}
    if login.status_code == 200:
        refresh = client.refresh_token(login.json()["refresh_token"])
        out["refresh"] = {"status": refresh.status_code, "body": refresh.json()}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
