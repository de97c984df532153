"""The S3 client of ``scheduler/objstore.py``, apart because importing boto3 takes ~0.4 s: static keys,
or a role assumed with a web identity token (STS ``AssumeRoleWithWebIdentity`` through botocore's
fetcher, which refreshes the temporary credentials before they expire)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import botocore.session
from botocore.config import Config as BotoConfig
from botocore.credentials import (
    AssumeRoleWithWebIdentityCredentialFetcher,
    CredentialProvider,
    CredentialResolver,
    DeferredRefreshableCredentials,
)
from botocore.utils import FileWebIdentityTokenLoader

if TYPE_CHECKING:
    from scheduler.objstore import ObjectStorage


def s3_client(storage: ObjectStorage, attempts: int) -> Any:
    session = botocore.session.Session()
    if storage.role_arn is not None:
        assert storage.web_identity_token_file is not None
        provider = CredentialResolver([_WebIdentity(storage, session)])
        session.register_component("credential_provider", provider)
    else:
        session.set_credentials(storage.access_key, storage.secret_key)
    return boto3.Session(botocore_session=session).client(
        "s3",
        endpoint_url=storage.url,
        region_name=storage.region,
        config=BotoConfig(
            signature_version="s3v4",
            s3={"addressing_style": "path"},
            retries={"mode": "standard", "max_attempts": attempts},
        ),
    )


class _WebIdentity(CredentialProvider):  # type: ignore[misc]
    """The role's temporary credentials, fetched on first use and refreshed before they expire."""

    METHOD = "assume-role-with-web-identity"

    def __init__(self, storage: ObjectStorage, session: botocore.session.Session) -> None:
        super().__init__()
        self._storage = storage
        self._session = session

    def load(self) -> DeferredRefreshableCredentials:
        storage = self._storage

        def sts_client(service: str, **kwargs: Any) -> Any:
            return self._session.create_client(service, region_name=storage.region, **kwargs)

        fetcher = AssumeRoleWithWebIdentityCredentialFetcher(
            client_creator=sts_client,
            web_identity_token_loader=FileWebIdentityTokenLoader(str(storage.web_identity_token_file)),
            role_arn=storage.role_arn,
            extra_args={"RoleSessionName": "sift-snapshot"},
        )
        return DeferredRefreshableCredentials(refresh_using=fetcher.fetch_credentials, method=self.METHOD)
