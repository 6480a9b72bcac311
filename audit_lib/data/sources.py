"""Registry of every dataset file an audit reads: upstream location, revision, sha256 pin, licence."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, Union

from audit_lib.errors import UnknownSourceError


@dataclass(frozen=True)
class HubFile:
    """A file in a Hugging Face hub repository at a fixed revision (or a branch, when unpinned)."""

    repo_id: str
    revision: str
    path: str
    repo_type: str = "dataset"

    def url(self) -> str:
        prefix = "datasets/" if self.repo_type == "dataset" else ""
        endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
        return f"{endpoint}/{prefix}{self.repo_id}/resolve/{self.revision}/{self.path}"


@dataclass(frozen=True)
class UrlFile:
    """A file published at a plain HTTPS address (release assets, raw files at a commit)."""

    url_template: str

    def url(self) -> str:
        return self.url_template


@dataclass(frozen=True)
class PackageFile:
    """A copy of the same bytes shipped inside an installed PyPI package."""

    package: str
    resource: str


Upstream = Union[HubFile, UrlFile]
FileFormat = Literal["jsonl", "jsonl.gz", "json", "csv", "parquet", "text", "zip"]


@dataclass(frozen=True)
class SourceFile:
    """One registered file: where it comes from and what its bytes must hash to."""

    dataset: str
    file: str
    upstream: Upstream | None
    sha256: str | None
    licence: str
    format: FileFormat
    description: str = ""
    package_copy: PackageFile | None = None
    synthetic: bool = False

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.file}"

    @property
    def pinned(self) -> bool:
        return self.sha256 is not None

    def upstream_text(self) -> str:
        if self.upstream is None:
            return "no public upstream (mirror only)"
        return self.upstream.url()


def _format_of(file: str) -> FileFormat:
    for suffix, kind in ((".jsonl.gz", "jsonl.gz"), (".jsonl", "jsonl"), (".json", "json"),
                         (".csv", "csv"), (".parquet", "parquet"), (".zip", "zip")):
        if file.endswith(suffix):
            return kind  # type: ignore[return-value]
    return "text"


OPENAI_HUMANEVAL_COMMIT = "6d43fb980f9fee3c892a914eda09951f772ad10d"
ERRATA_FORK_COMMIT = "64e6808f11de1314de5965f142e4534ff56720f8"
HUMANEVAL_PLUS_RELEASES = "https://github.com/evalplus/humanevalplus_release/releases/download"
MBPP_PLUS_RELEASES = "https://github.com/evalplus/mbppplus_release/releases/download"
INTENTSPEC_COMMIT = "044eb559a4703304b80f630ce376c7d17a4cc642"
INTENTSPEC_RAW = f"https://raw.githubusercontent.com/anote-ai/Research-IntentSpecification/{INTENTSPEC_COMMIT}"
LCB_AUDIT_COMMIT = "4313aaa0217d9f11afd90ecd31491c4930963053"
LCB_AUDIT_RAW = (
    f"https://raw.githubusercontent.com/simonjmendelsohn/impossiblebench-honest-failure/{LCB_AUDIT_COMMIT}"
)
IMPOSSIBLE_LCB_REPO = "fjzzq2002/impossible_livecodebench"
IMPOSSIBLE_LCB_REVISION = "98650ffc3f28a01b261669b6d19fcd7773823710"
CODEINSIGHTS_REPO = "Kazchoko/my_dataset"
EVAL_ARENA_COMMIT = "1c869f4036ac2eec9ed690ec187ce372a10dee47"
EVAL_ARENA_RAW = f"https://raw.githubusercontent.com/crux-eval/eval-arena/{EVAL_ARENA_COMMIT}/data"
# Folders of a mirror that hold files a user brings (model samples and their official verdicts), not a dataset
# the audits read: `-p samples_path` names them.
USER_FILE_FOLDERS: tuple[str, ...] = ("samples",)

_INTENTSPEC_RUN_FILES: dict[str, str] = {
    "generations/claude-sonnet-4-6__HumanEval_101.jsonl": "61693be0a03c60e57fdaf9630aad38894ddbc251220713112dc7a7f38e4250ba",
    "generations/claude-sonnet-4-6__HumanEval_102.jsonl": "cdb19a743d74ec07c0d329f42f3a4b8aa356ac4aee3304c7d95030cd7bbd05de",
    "generations/claude-sonnet-4-6__HumanEval_104.jsonl": "f44760bf52e36e06bac4a56d56fe9cf95b15930fd7926bff1aada575dc179f3b",
    "generations/claude-sonnet-4-6__HumanEval_105.jsonl": "a54e18e500363ecfa7c3aac38530314d7d6dfc113af77e6a133a61650834ffc5",
    "generations/claude-sonnet-4-6__HumanEval_108.jsonl": "da151c5fc44f1660aa8b2aa6f768becbc37f7e7f8d87696872386c30451e2741",
    "generations/claude-sonnet-4-6__HumanEval_111.jsonl": "c13825597227be56d03141ab054c9a119037317490f4584e5e9b46376c5c9026",
    "generations/claude-sonnet-4-6__HumanEval_112.jsonl": "813fb4e2694604da03d86322476b9686f3411033800d964022b78d544577ba76",
    "generations/claude-sonnet-4-6__HumanEval_12.jsonl": "da24e28e67605d7d804b7a14fad7db9b4a489460629723d5236bff4768b7af04",
    "generations/claude-sonnet-4-6__HumanEval_120.jsonl": "72ab8f4c4a69d94b3cae09ac6e0c2602484b7c2129be109c9b9c01e632ef827a",
    "generations/claude-sonnet-4-6__HumanEval_126.jsonl": "2f950c2073bc69f2b5c47fa0f1d7a301627c2d8dfc22330e1685b5d712509669",
    "generations/claude-sonnet-4-6__HumanEval_131.jsonl": "3254929cd43747468ea38921c80b7558ec42485404196df948b65aac9a73eca1",
    "generations/claude-sonnet-4-6__HumanEval_135.jsonl": "5d05f39193521af121b7457c7004ef5450c64d14d6c09397323ffeea5ce20372",
    "generations/claude-sonnet-4-6__HumanEval_136.jsonl": "a724c76e0062ebd31e11633187bd0f6b29c2eff31e927b12818eccc3d4557113",
    "generations/claude-sonnet-4-6__HumanEval_140.jsonl": "07cef6c1e97ff67c144f02d1ea2795231ce6403e8f393b68cb27373de96c0d44",
    "generations/claude-sonnet-4-6__HumanEval_145.jsonl": "efb00057ea116032b2983cb16743ff87ea0ea05ab99a53fd008a05febf76b0dd",
    "generations/claude-sonnet-4-6__HumanEval_149.jsonl": "354117ed0e9bf9028b1ce2876d067e10a865690c3f57e3205e2aeb94439e1fa3",
    "generations/claude-sonnet-4-6__HumanEval_151.jsonl": "f6211a5f90578c90e8c472e9cc65f182cda39875ee5662bb32b17e7a1fce4bcf",
    "generations/claude-sonnet-4-6__HumanEval_158.jsonl": "fa58f5ce0a68ba424dd8dd92038366e4f9b15b80df2305b699395215b9260deb",
    "generations/claude-sonnet-4-6__HumanEval_161.jsonl": "c77a91d8afbfcd7808ee2ce68ba5f57ef3a6612de0509ec29c588b4de0c2b6dc",
    "generations/claude-sonnet-4-6__HumanEval_163.jsonl": "6953abb271efc68618b09bb7c3c8d36bc4e470f5a23f247214c05a19440739b9",
    "generations/claude-sonnet-4-6__HumanEval_18.jsonl": "954dc8177ff46d29d29e194544b329a45a47efb05b1440b3d6fdbe3be73b2a4d",
    "generations/claude-sonnet-4-6__HumanEval_20.jsonl": "02463c33b6ea6e4ac42dd1f300c244a1e71c4c8a06c425bbcf56a975c9c0c173",
    "generations/claude-sonnet-4-6__HumanEval_21.jsonl": "4f5ccce80ad0aee85ee4856d7db8e828586df6c8125aaf05fc91ac9621ac8a9d",
    "generations/claude-sonnet-4-6__HumanEval_25.jsonl": "2d0b6248a9c46560c7414ef430bd9b343890c8c2f07932576fdb20e587aaa6f2",
    "generations/claude-sonnet-4-6__HumanEval_26.jsonl": "f59eb551e084529ea148c01538882c4151bb3469aaaa98959b0d46f3da60a93c",
    "generations/claude-sonnet-4-6__HumanEval_30.jsonl": "bb1d76fe61f7f930c06e209caba50c2ba9fdd71e5abc7073f49a47772b9b4c1d",
    "generations/claude-sonnet-4-6__HumanEval_34.jsonl": "82495105bb733b4ebc15e49878b0c7570eaf66d3a4c32ff8ff893844cfdac122",
    "generations/claude-sonnet-4-6__HumanEval_42.jsonl": "ff3f74b4b36bc7b534076f551cc1e93ab25619e4bb9953b4e7c39be51224067a",
    "generations/claude-sonnet-4-6__HumanEval_47.jsonl": "c7245808396f96f14a2fffdc1f5ac82fdc4d040fbbff505af8c36a2e6b789c35",
    "generations/claude-sonnet-4-6__HumanEval_51.jsonl": "8481ac5a13b864baef684f2141414bd05b9840ca14d12cdd450fa62ba3e3b3c2",
    "generations/claude-sonnet-4-6__HumanEval_57.jsonl": "23a042ae83d6e55f639f11a3b70878bc65c91680f31153e25b3c2c6b2a574e83",
    "generations/claude-sonnet-4-6__HumanEval_58.jsonl": "7d28c46bbb1bbe9660133f2da1187bb5d52e9d61570e1788da5da3c4551f2147",
    "generations/claude-sonnet-4-6__HumanEval_64.jsonl": "a5e964b931802ec0b998354649307cb6536f9114e6437d4f1538e68761fa01d1",
    "generations/claude-sonnet-4-6__HumanEval_65.jsonl": "8ef3fab9412aeeb39c07ab13139c992f33158e715cc467de5fc89ab1ec1ca2f3",
    "generations/claude-sonnet-4-6__HumanEval_66.jsonl": "7d1874573a80c4b877af8b8d316412bf1a7cee8b7ef515eb1b45acd64f16de0f",
    "generations/claude-sonnet-4-6__HumanEval_68.jsonl": "89918c036af903f338d1af17dc5df744e1d3402d07e7dbf0382810ccd9cd7a3c",
    "generations/claude-sonnet-4-6__HumanEval_7.jsonl": "bd984ddbdaeb520a1a5ed8b85dbe003971c7e02db6cabde8a73318c56a136701",
    "generations/claude-sonnet-4-6__HumanEval_70.jsonl": "b0b6223a46bcc9998573f45a61e6b5e5d111eb5275569a2a077b114574b905df",
    "generations/claude-sonnet-4-6__HumanEval_71.jsonl": "97ede7e9529633d5839591344402b8a89894b6d8b27dfe192202a0ed6a2dbfc6",
    "generations/claude-sonnet-4-6__HumanEval_72.jsonl": "e5688be7fa664f107f20cd0fe3d955674062af9cb09d80a410f5946d53642887",
    "generations/claude-sonnet-4-6__HumanEval_74.jsonl": "83570ccc4bd4d598b794fdf6a42338ee6836f4da9d087b94555e8dd534e29591",
    "generations/claude-sonnet-4-6__HumanEval_86.jsonl": "3017cf695935d88566bc1e1f887ee13dad7979920e33be3250464f8255c9b26e",
    "generations/claude-sonnet-4-6__HumanEval_88.jsonl": "2ce374e7476d8f9cdb971f8d56307c47cf2ad8f0243eb78f730b73848bea7ca5",
    "generations/claude-sonnet-4-6__HumanEval_90.jsonl": "b874c945d673f8dbe68ad69bb191bd6ae2f6223006d3689ae5d884203b380d50",
    "generations/claude-sonnet-4-6__HumanEval_91.jsonl": "c3d8561ba64cdbff5fd5dbf494ea011270e2df00688ea4be0b97ec5600803ecf",
    "generations/claude-sonnet-4-6__HumanEval_93.jsonl": "0c469d284aad0845f0f919ffca1f3ac06357210656c4e57890679dca97b7d8ce",
    "generations/claude-sonnet-4-6__HumanEval_95.jsonl": "27a898075da7a44c4df14243bc9414c6047c4953a64ce5f7512c7c446e687425",
    "generations/claude-sonnet-4-6__HumanEval_98.jsonl": "949ea589915fcc58ad0398d1034f7248adddb2a9472c3063c0af6dacabc63095",
    "generations/claude-sonnet-4-6__HumanEval_99.jsonl": "de5fcee4e1e3a44109514b0b2cf3be2b5bd6e64706381f690d0e4b1d24f7ccd6",
    "generations/gpt-4_1__HumanEval_101.jsonl": "734516c9d3542f83614154997c50255f7ba3bcbf78579e79fd60f08e83e90b3e",
    "generations/gpt-4_1__HumanEval_102.jsonl": "5944fe212faf44eeda2a0220d3fdbbe982a8176f948bdaa5a3e89e2f6b3f781c",
    "generations/gpt-4_1__HumanEval_104.jsonl": "5708b7dd9837c129ec9bc15ac373bb5c06631bef606a8f88f332bf5c984a63eb",
    "generations/gpt-4_1__HumanEval_105.jsonl": "e773c17938f7b7e68d931f91d85b616f9cb02c76728592b664250eea4ded17d5",
    "generations/gpt-4_1__HumanEval_108.jsonl": "f41624ab71d60c4cf40b220e070647cd2e1ae499fcefc4f3c0a4037761d672c5",
    "generations/gpt-4_1__HumanEval_111.jsonl": "91a00e64dc73607c556a96aceeb535cbbdfe3013ea78783b4f3e138c6e501b1e",
    "generations/gpt-4_1__HumanEval_112.jsonl": "b91e2a50818c9de8a8dad51e9d265aa4f98749e8080f28f8e4bbce25ba172e36",
    "generations/gpt-4_1__HumanEval_12.jsonl": "a59eb2d8e98dcac2121126672cf670668b1d306a20b24c92b7c868d4706cda8d",
    "generations/gpt-4_1__HumanEval_120.jsonl": "72ab8f4c4a69d94b3cae09ac6e0c2602484b7c2129be109c9b9c01e632ef827a",
    "generations/gpt-4_1__HumanEval_126.jsonl": "e6cf6cabf5bbae847decfaaa11b124a64c249cb81ba5ff87282bd7d3a47a471f",
    "generations/gpt-4_1__HumanEval_131.jsonl": "37e56b17c4dbb2bfc9e2dbff6f896cc22727708bd20da6c042f99b035d481c58",
    "generations/gpt-4_1__HumanEval_135.jsonl": "458ddeeb48569b09b5f04af759189ec070cf43821a39afa51a39f7cd154e2495",
    "generations/gpt-4_1__HumanEval_136.jsonl": "a9986bcb204d62daf9d8f8f78c9d1eff09cf5962a0059430320d43aa225dc1df",
    "generations/gpt-4_1__HumanEval_140.jsonl": "c2c6547ab432cdd459bc45e3f6152dbea3ebe3627c5151938fb35f372eb54812",
    "generations/gpt-4_1__HumanEval_145.jsonl": "df279218d82feeb022bd71c1f0d4194d277266650bf028cb6c7139098e591e16",
    "generations/gpt-4_1__HumanEval_149.jsonl": "b6dad55c3b0e2a67456488f7ea655461d67c4482320072565343f5f656173aa0",
    "generations/gpt-4_1__HumanEval_151.jsonl": "e0728ab4a823c42ee34bb9d5b51d55d8b61bc011789705c1f1ea673f2e896197",
    "generations/gpt-4_1__HumanEval_158.jsonl": "d07ccf3f51838212e2128d5e093f2e1fe5a7a61edab21c3124f3cfe00b64de9d",
    "generations/gpt-4_1__HumanEval_161.jsonl": "1280acb9642192b469e2c1a68fd16198543879e1eb1ba6ef274cb91a98864ce5",
    "generations/gpt-4_1__HumanEval_163.jsonl": "137e926432f08dfc8a6c6f4fa90a77b4c560b15a15b94be406c7eac00ecfb5c1",
    "generations/gpt-4_1__HumanEval_18.jsonl": "929cad2c836dfae3427ce28ebad86069fa4264ad531eed2d12776b3c39c7ff2c",
    "generations/gpt-4_1__HumanEval_20.jsonl": "9537fe39c0b047a807ced79bdb977c9f2332aece1e586d2ef269d95b787fbde0",
    "generations/gpt-4_1__HumanEval_21.jsonl": "5baaeff3ec003391c8b38e302d8bec68ff7280d4b912de5ac0c62c04a9fe9004",
    "generations/gpt-4_1__HumanEval_25.jsonl": "086f3f383fb2816ca73151799611f5804ef838ebb4a486452d24f2726481ff1c",
    "generations/gpt-4_1__HumanEval_26.jsonl": "d062a263c1d2c76a28071fffc1d7cea0c8e8c9984b31e248aefb2c4720d5722c",
    "generations/gpt-4_1__HumanEval_30.jsonl": "ee45e6a5ce621e8283c3ecd1db270984e67b2b6cb229cdd14c0e2026285c45e7",
    "generations/gpt-4_1__HumanEval_34.jsonl": "60fe3176317d228da303d35cb85bc2869a6ff880cf4efed44843d86221b79f07",
    "generations/gpt-4_1__HumanEval_42.jsonl": "ff3f74b4b36bc7b534076f551cc1e93ab25619e4bb9953b4e7c39be51224067a",
    "generations/gpt-4_1__HumanEval_47.jsonl": "b0aab23a212bdc9a86d0cf450ecb245ee39fcdaf5382db3c0c3bada130d4bb9e",
    "generations/gpt-4_1__HumanEval_51.jsonl": "35edc8b60a5cb4adad16905cb7c07ce17454f79284364e43614287260fc8f7ba",
    "generations/gpt-4_1__HumanEval_57.jsonl": "8edc4853fe6e86badf2f7dcc6455a7d12910010daaa9c68e612a24930f6e8dc5",
    "generations/gpt-4_1__HumanEval_58.jsonl": "af78c22982032ef0c9c7d13ff12fadfdcf5cda66ffb537555f80dda7b5f6e769",
    "generations/gpt-4_1__HumanEval_64.jsonl": "81a9e8f4bbc8b29a9c9ab5a9d479a0e45452ab48eb36f2abcfda3ec23ded228c",
    "generations/gpt-4_1__HumanEval_65.jsonl": "a1a0c5192368d935efa9c6f01a92a126c4676b84d004408a0910ada63210a4b4",
    "generations/gpt-4_1__HumanEval_66.jsonl": "7d1874573a80c4b877af8b8d316412bf1a7cee8b7ef515eb1b45acd64f16de0f",
    "generations/gpt-4_1__HumanEval_68.jsonl": "9d7cfc618427d51dbffe55aa4b7144f652108e52a3d2d12496ab6cace75511e8",
    "generations/gpt-4_1__HumanEval_7.jsonl": "bd984ddbdaeb520a1a5ed8b85dbe003971c7e02db6cabde8a73318c56a136701",
    "generations/gpt-4_1__HumanEval_70.jsonl": "566ad15cc5271819b58c57f7f627a77ba4a9c9e7bac9af78c62d8a4619346b03",
    "generations/gpt-4_1__HumanEval_71.jsonl": "88e21008d4c3470954ca0ede7e2e07e76cfa8e0a49a52543b9e93a275fef34db",
    "generations/gpt-4_1__HumanEval_72.jsonl": "e5688be7fa664f107f20cd0fe3d955674062af9cb09d80a410f5946d53642887",
    "generations/gpt-4_1__HumanEval_74.jsonl": "ff519fc2aa1498a564c2ca69b2946c853c372c079c1d3f60e4e9513b79089ada",
    "generations/gpt-4_1__HumanEval_86.jsonl": "3017cf695935d88566bc1e1f887ee13dad7979920e33be3250464f8255c9b26e",
    "generations/gpt-4_1__HumanEval_88.jsonl": "2ce374e7476d8f9cdb971f8d56307c47cf2ad8f0243eb78f730b73848bea7ca5",
    "generations/gpt-4_1__HumanEval_90.jsonl": "6dbbea355a3a85d9dccf60750c00b0828e0619146d75f1ddeecb232b613c5c15",
    "generations/gpt-4_1__HumanEval_91.jsonl": "d3878b58226cf2376fd52b2455e1abd94691d408d927138ebaaf2792d7d2d2ce",
    "generations/gpt-4_1__HumanEval_93.jsonl": "0c469d284aad0845f0f919ffca1f3ac06357210656c4e57890679dca97b7d8ce",
    "generations/gpt-4_1__HumanEval_95.jsonl": "ac1c280589202161e388a8ccf7e2b558bdce7a3a324c3b6e21b582756b99b2ea",
    "generations/gpt-4_1__HumanEval_98.jsonl": "f7dbe6b6e579e90545940fa5ddf59d6a686abbc4f6d02501b1d5ff243340f91e",
    "generations/gpt-4_1__HumanEval_99.jsonl": "c0a7d0fc8934c718f6fcb731b20aaf874f650e4d8d8a6991d8f0b9aa322638f8",
    "results/experiment1.json": "0e32bbd305439486c9b0fa28c4f95114b8eab29542ffb32dfc447ed7c4723f83",
    "results/experiment1_gpt-4_1.json": "e8c2458ded258c6d72de64db1a5a86f16374be638cdbaef91391ca8d3b09d3cd",
}


def _build_registry() -> dict[str, SourceFile]:
    entries: list[SourceFile] = [
        SourceFile("humaneval", "HumanEval.jsonl.gz",
                   UrlFile(f"https://github.com/openai/human-eval/raw/{OPENAI_HUMANEVAL_COMMIT}/data/HumanEval.jsonl.gz"),
                   "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef", "MIT", "jsonl.gz",
                   "OpenAI HumanEval, 164 problems", PackageFile("human_eval", "data/HumanEval.jsonl.gz")),
        SourceFile("humaneval", "community_errata/human-eval-enhanced-202307.jsonl.gz",
                   UrlFile(f"https://github.com/marcusm117/human-eval/raw/{ERRATA_FORK_COMMIT}"
                           "/data/human-eval-enhanced-202307.jsonl.gz"),
                   "333e4958ca95249ecc3bfa70a0485a757fb0150901383ed46464f5f8c5f7dede", "MIT", "jsonl.gz",
                   "community errata (openai/human-eval PR #23, never merged)"),
    ]
    for name, sha in (
        ("HumanEvalPlus.jsonl.gz", "272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101"),
        ("HumanEvalPlus-Mini.jsonl.gz", "91486741f1627101021fbe50523df08eebb5b0bf5e804b633dcd5ca3c14dbd2f"),
        ("HumanEvalPlus-NoExtreme.jsonl.gz", "298f79977b2663b8b8ab6b5fa50b17d6f23a92603d24f39e26203fe58c37eeda"),
        ("HumanEvalPlus-OriginFmt.jsonl.gz", "daa7661c8189924068069b0872a440b491edb60f8bdf431d5957adc88d18bae5"),
    ):
        entries.append(SourceFile("humaneval_plus", name, UrlFile(f"{HUMANEVAL_PLUS_RELEASES}/v0.1.10/{name}"),
                                  sha, "Apache-2.0", "jsonl.gz", "HumanEval+ v0.1.10 release asset"))
    entries.append(SourceFile(
        "humaneval_plus", "v0.1.9/HumanEvalPlus.jsonl.gz",
        UrlFile(f"{HUMANEVAL_PLUS_RELEASES}/v0.1.9/HumanEvalPlus.jsonl.gz"),
        "e62f4130146963d969da64553f407a66e52d095adbfed4ee6733b4d59e14a3ed", "Apache-2.0", "jsonl.gz",
        "HumanEval+ v0.1.9 release asset"))
    for name, sha in (
        ("MbppPlus.jsonl.gz", "af43697e8791c4c149bdfd6b489d8b5412507551ac20e28a439f650b8225db63"),
        ("MbppPlus-NoExtreme.jsonl.gz", "72d32acaea73d5606cb97041b30d45bbda9435a675369d3e31965513ee94e564"),
        ("MbppPlus-OriginFmt.jsonl.gz", "7a5aec547b134fa297ee6c45f829298aa3f58de02547b8d8a5c3d85d9cb10efc"),
    ):
        entries.append(SourceFile("humaneval_plus", f"mbpp_plus/{name}", UrlFile(f"{MBPP_PLUS_RELEASES}/v0.2.0/{name}"),
                                  sha, "Apache-2.0", "jsonl.gz", "MBPP+ v0.2.0 release asset"))

    entries += [
        SourceFile("impossible_lcb", "known_issues.csv", UrlFile(f"{LCB_AUDIT_RAW}/manifest/known_issues.csv"),
                   "c4ff7769ac21ce1994838fd7f42e55d543b9d7201910fac81d42a6873b4da2fa", "MIT (audit repo)", "csv",
                   "ImpossibleBench LCB audit: defect list"),
        SourceFile("impossible_lcb", "lcb_manifest.csv", UrlFile(f"{LCB_AUDIT_RAW}/manifest/lcb_manifest.csv"),
                   "9a9aad7197c7b035d506875deca42781cf536a0bd0b505a21c4ab6fedf3aa9eb", "MIT (audit repo)", "csv",
                   "mutated vs original assertion of all 103 tasks, oneoff and conflicting"),
        SourceFile("impossible_lcb", "oneoff_examples_reconstructed.jsonl", None,
                   "49512890db566dd53b4568b70220aee0157f6b3ead71f1163e34f16e8c3f9e04", "unstated (benchmark content)",
                   "jsonl", "two oneoff rows reconstructed from transcripts (not upstream bytes)"),
    ]
    for split in ("original", "oneoff", "conflicting"):
        path = f"data/{split}-00000-of-00001.parquet"
        entries.append(SourceFile("impossible_lcb", path, HubFile(IMPOSSIBLE_LCB_REPO, IMPOSSIBLE_LCB_REVISION, path),
                                  None, "unstated", "parquet", f"Impossible-LiveCodeBench `{split}` split, 103 rows"))

    intentspec_files = {
        "spec_pairs.jsonl": ("data/specs/spec_pairs.jsonl",
                             "901903a35a56c7ab5546a2b34a707f88d7bbc5341261ab6e45bdc761ff1021b6"),
        "canonicals.jsonl": ("data/specs/canonicals.jsonl",
                             "743758ec62a129acb7b019a91409047628748d3d26d1443d3c9cd1c0ce3d3081"),
        "DATA_SUPPLEMENT_README.md": ("data_submission/README.md",
                                      "ec38c27c1477a5deb865b5cbe22314706714b0354e42acda6a8d9ca54fb37cdc"),
        "devintent_data.zip": ("devintent_data.zip",
                               "4fb5ded00982debe3cfa1b3847c30aed20eac07ce9937f2cbad234c0d2a01e11"),
    }
    for file, sha in _INTENTSPEC_RUN_FILES.items():
        upstream_path = f"data/{file}" if file.startswith("generations/") else file
        intentspec_files[file] = (upstream_path, sha)
    for file, (upstream_path, sha) in intentspec_files.items():
        entries.append(SourceFile("intentspec", file, UrlFile(f"{INTENTSPEC_RAW}/{upstream_path}"), sha, "MIT",
                                  _format_of(file), "IntentSpec (DevIntent) data supplement"))

    for file in ("Scenario5_data.csv", "student_performace_by_topic.csv", "test_cases_by_qid.json"):
        entries.append(SourceFile("codeinsights", file, HubFile(CODEINSIGHTS_REPO, "main", file), None,
                                  "unstated", _format_of(file), "HELM CodeInsights inputs, read from resolve/main"))
    for file, sha, what in (
        ("humaneval.jsonl", "a65e061e56db75c78a1c7919a2f2b1c89e408f66c85e8b5e2945b99ddecb43c6", "HumanEval, 49 models"),
        ("humaneval+.jsonl", "7a9ae8be03275e0be7af814c742c237fd59e4733a38c00163faf0e69f38fa62b", "HumanEval+, 49 models"),
        ("mbpp.jsonl", "8086a56cec781e5a77e75b09c5c6c4f7567d48aceb5b1abbd24404a9f04e0fdf", "MBPP, 59 models"),
        ("mbpp+.jsonl", "192f024c07afbdd894bef09b0ce6fbcdba86d84d4589d693e6f890c35a4c2e38", "MBPP+, 59 models"),
        ("lcb_codegen.jsonl", "0646e979dd8125ee680b39f6433b40f77d963a6216b1774ce06661d956eacb83",
         "LiveCodeBench code generation, 58 models"),
    ):
        entries.append(SourceFile("model_results", file, UrlFile(f"{EVAL_ARENA_RAW}/{file}"), sha,
                                  "unstated (no licence file upstream)", "jsonl",
                                  f"eval-arena per-task outcomes of published models: {what}"))
    return {entry.key: entry for entry in entries}


REGISTRY: dict[str, SourceFile] = _build_registry()
DATASETS: tuple[str, ...] = tuple(dict.fromkeys(entry.dataset for entry in REGISTRY.values()))


def get_source(dataset: str, file: str) -> SourceFile:
    """The registry entry for `dataset/file`; an unknown pair is an error that lists the dataset's files."""
    key = f"{dataset}/{file}"
    if key in REGISTRY:
        return REGISTRY[key]
    known = [entry.file for entry in REGISTRY.values() if entry.dataset == dataset]
    hint = f"known files of {dataset!r}: {', '.join(known[:8])}{' ...' if len(known) > 8 else ''}" if known \
        else f"known datasets: {', '.join(DATASETS)}"
    raise UnknownSourceError(f"no registered file {key!r}; {hint}", dataset=dataset, file=file)


def files_of(dataset: str, prefix: str = "") -> list[SourceFile]:
    """Every registered file of one dataset (optionally under a folder prefix), in registry order."""
    if dataset not in DATASETS:
        raise UnknownSourceError(f"unknown dataset {dataset!r}; known datasets: {', '.join(DATASETS)}",
                                 dataset=dataset)
    return [entry for entry in REGISTRY.values() if entry.dataset == dataset and entry.file.startswith(prefix)]
