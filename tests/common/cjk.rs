//! Chat messages in Chinese, Japanese and Korean for the token estimator's
//! calibration and tests, assembled from word lists written for this project
//! (no outside text): a coding assistant's questions and answers, everyday chat
//! and longer notes, mixed with English names, paths, numbers, commands and code
//! blocks as real chats are. Deterministic: the same index gives the same message.

/// One language's words. `{file}`, `{func}`, `{num}`, `{cmd}`, `{err}`, `{en}`,
/// `{place}`, `{food}`, `{weather}`, `{exam}`, `{adj}` and `{lang}` are filled in.
struct Words {
    name: &'static str,
    /// Whether sentences are separated by a space (Korean) or not.
    spaced: bool,
    subjects: &'static [&'static str],
    predicates: &'static [&'static str],
    endings: &'static [&'static str],
    connectors: &'static [&'static str],
    questions: &'static [&'static str],
    answers: &'static [&'static str],
    everyday: &'static [&'static str],
    comments: &'static [&'static str],
    headings: &'static [&'static str],
    places: &'static [&'static str],
    foods: &'static [&'static str],
    weather: &'static [&'static str],
    exams: &'static [&'static str],
    adjectives: &'static [&'static str],
    subjects_of_study: &'static [&'static str],
}

const ZH: Words = Words {
    name: "zh",
    spaced: false,
    subjects: &[
        "我",
        "我们",
        "这个函数",
        "这个接口",
        "测试用例",
        "编译器",
        "服务器",
        "用户",
        "我们的团队",
        "数据库连接",
        "前端页面",
        "后端服务",
        "这段代码",
        "新版本",
        "配置文件",
        "日志系统",
        "缓存",
        "我的同事",
        "客户",
        "定时任务",
    ],
    predicates: &[
        "在运行 {cmd} 的时候报错",
        "无法正确解析 {file}",
        "返回了空的结果",
        "占用了大约 {num} MB 内存",
        "比上一个版本慢了很多",
        "没有处理好边界情况",
        "被调用了 {num} 次",
        "在第 {num} 行抛出了异常",
        "一直提示 {err}",
        "需要重新设计",
        "不能兼容旧的数据格式",
        "在生产环境里表现正常",
        "只在 Windows 上出问题",
        "依赖 {en} 的最新版本",
        "把所有请求都记录到日志里",
        "在高并发的情况下会死锁",
        "升级以后就启动不了了",
        "每隔 {num} 秒重新连接一次",
    ],
    endings: &["。", "。", "。", "！", "……"],
    connectors: &[
        "但是",
        "因为",
        "所以",
        "然后",
        "另外",
        "如果这样的话",
        "虽然如此",
        "而且",
        "不过",
        "其实",
        "首先",
        "最后",
        "换句话说",
        "一般来说",
    ],
    questions: &[
        "请问应该怎么修改？",
        "有没有更好的办法？",
        "你能帮我看一下吗？",
        "这是什么原因呢？",
        "我应该先检查哪里？",
        "这样写对吗？",
        "能详细解释一下吗？",
    ],
    answers: &[
        "这个问题通常是因为 {en} 的配置不正确。",
        "你可以先运行 {cmd} 看看输出。",
        "建议把 `{func}` 拆成两个更小的函数。",
        "从错误信息来看，问题出在 {file} 的第 {num} 行。",
        "这样修改以后，性能大约可以提高 {num}%。",
        "注意不要在循环里重复创建连接。",
        "我们可以用一个哈希表来缓存已经计算过的结果。",
        "如果还有问题，请把完整的日志发给我。",
        "先确认 {en} 的版本是否和文档里写的一致。",
        "这里的关键是先加锁，再读取共享的状态。",
        "另外，最好给 `{func}` 加上单元测试。",
    ],
    everyday: &[
        "我上周末去{place}玩了两天。",
        "那里的{food}特别好吃。",
        "天气{weather}，我们在湖边散步。",
        "我最近在准备{exam}，每天学习到很晚。",
        "朋友推荐我看了一部电影，讲的是一个{adj}的故事。",
        "明天早上我要去{place}开会。",
        "你觉得学习{lang}最好的方法是什么？",
        "我想给妈妈买一份生日礼物。",
        "这家咖啡店的环境很安静，适合看书。",
        "周末我们打算在家里做{food}。",
        "他说下个月想换一份工作。",
        "孩子们放假以后每天都在公园里玩。",
    ],
    comments: &[
        "读取配置文件",
        "如果为空就直接返回",
        "缓存计算结果",
        "记录错误日志",
        "检查用户权限",
        "最多重试三次",
        "把结果写回数据库",
    ],
    headings: &[
        "问题描述",
        "原因分析",
        "解决方案",
        "注意事项",
        "下一步计划",
        "总结",
    ],
    places: &[
        "北京", "上海", "杭州", "成都", "西安", "广州", "深圳", "南京", "苏州", "青岛",
    ],
    foods: &[
        "火锅",
        "小笼包",
        "烤鸭",
        "牛肉面",
        "饺子",
        "麻婆豆腐",
        "米线",
    ],
    weather: &["很好", "有点冷", "非常热", "一直下雨", "阴沉沉的"],
    exams: &["期末考试", "研究生考试", "英语考试", "驾照考试"],
    adjectives: &["感人", "有趣", "奇怪", "悲伤", "温暖"],
    subjects_of_study: &["英语", "日语", "编程", "数学", "钢琴"],
};

const JA: Words = Words {
    name: "ja",
    spaced: false,
    subjects: &[
        "私は",
        "この関数は",
        "テストが",
        "サーバーが",
        "ユーザーが",
        "データベースの接続が",
        "新しいバージョンは",
        "設定ファイルが",
        "このコードは",
        "チームのみんなは",
        "ログの出力が",
        "キャッシュが",
        "同僚の田中さんは",
        "バッチ処理が",
    ],
    predicates: &[
        "{cmd} を実行するとエラーになります",
        "{file} を正しく読み込めません",
        "空の結果を返しています",
        "約 {num} MB のメモリを使っています",
        "前のバージョンよりかなり遅くなりました",
        "境界値の処理ができていません",
        "{num} 回も呼び出されています",
        "{num} 行目で例外が発生しています",
        "「{err}」と表示されます",
        "設計を見直す必要があります",
        "古いデータ形式と互換性がありません",
        "本番環境では問題なく動いています",
        "Windows でだけ失敗します",
        "{en} の最新版に依存しています",
        "アクセスが集中するとタイムアウトします",
        "アップデートしてから起動しなくなりました",
        "{kata}の設定がうまくいきません",
        "{kata}と{kata}の間でコンフリクトが起きています",
        "{kata}を変更してから動作がおかしくなりました",
    ],
    endings: &["。", "。", "。", "ね。", "よ。"],
    connectors: &[
        "しかし、",
        "それで、",
        "また、",
        "なので、",
        "ただし、",
        "実は、",
        "まず、",
        "最後に、",
        "つまり、",
        "一般的に、",
        "ところで、",
    ],
    questions: &[
        "どう直せばいいでしょうか？",
        "もっと良い方法はありますか？",
        "ちょっと見てもらえますか？",
        "原因は何でしょうか？",
        "どこから確認すればいいですか？",
        "この書き方で合っていますか？",
        "詳しく説明していただけますか？",
    ],
    answers: &[
        "この問題は {en} の設定が原因であることが多いです。",
        "まず {cmd} を実行して出力を確認してください。",
        "`{func}` を二つの小さな関数に分けることをおすすめします。",
        "エラーメッセージを見ると、{file} の {num} 行目に問題があります。",
        "この修正で性能が約 {num}% 向上します。",
        "ループの中で接続を毎回作らないように注意してください。",
        "計算済みの結果はハッシュマップにキャッシュできます。",
        "まだ問題がある場合は、ログ全体を送ってください。",
        "{en} のバージョンがドキュメントと一致しているか確認しましょう。",
        "共有している状態を読む前に、ロックを取るのがポイントです。",
        "それから、`{func}` にはユニットテストを追加したほうがいいです。",
        "{kata}を見直して、{kata}を分けるとすっきりします。",
        "まず{kata}のログを確認して、{kata}に問題がないか調べましょう。",
    ],
    everyday: &[
        "先週末は{place}に行ってきました。",
        "そこで食べた{food}がとてもおいしかったです。",
        "天気が{weather}ので、川沿いを散歩しました。",
        "最近は{exam}の勉強で毎日遅くまで起きています。",
        "友達におすすめされた映画を見ましたが、{adj}話でした。",
        "明日の朝は{place}で会議があります。",
        "{lang}を勉強するいちばん良い方法は何だと思いますか？",
        "母の誕生日にプレゼントを買いたいです。",
        "このカフェは静かで、本を読むのにぴったりです。",
        "週末は家で{food}を作るつもりです。",
        "彼は来月から新しい仕事を始めるそうです。",
        "子どもたちは夏休みの間、毎日プールに行っています。",
    ],
    comments: &[
        "設定ファイルを読み込む",
        "空なら何もしない",
        "計算結果をキャッシュする",
        "エラーをログに出す",
        "権限を確認する",
        "三回まで再試行する",
        "結果をデータベースに書き戻す",
    ],
    headings: &[
        "問題の説明",
        "原因",
        "対応方法",
        "注意点",
        "今後の予定",
        "まとめ",
    ],
    places: &[
        "東京",
        "大阪",
        "京都",
        "札幌",
        "福岡",
        "名古屋",
        "横浜",
        "奈良",
        "沖縄",
    ],
    foods: &[
        "ラーメン",
        "寿司",
        "天ぷら",
        "お好み焼き",
        "うどん",
        "カレー",
    ],
    weather: &[
        "よかった",
        "少し寒かった",
        "とても暑かった",
        "ずっと雨だった",
    ],
    exams: &["期末試験", "資格試験", "英語の試験", "大学入試"],
    adjectives: &["感動的な", "面白い", "不思議な", "悲しい", "温かい"],
    subjects_of_study: &["英語", "中国語", "プログラミング", "数学", "ピアノ"],
};

const KO: Words = Words {
    name: "ko",
    spaced: true,
    subjects: &[
        "저는",
        "이 함수는",
        "테스트가",
        "서버가",
        "사용자가",
        "데이터베이스 연결이",
        "새 버전은",
        "설정 파일이",
        "이 코드는",
        "우리 팀은",
        "로그 출력이",
        "캐시가",
        "제 동료는",
        "배치 작업이",
    ],
    predicates: &[
        "{cmd} 를 실행하면 오류가 납니다",
        "{file} 파일을 제대로 읽지 못합니다",
        "빈 결과를 반환합니다",
        "메모리를 약 {num} MB 사용합니다",
        "이전 버전보다 훨씬 느려졌습니다",
        "경계 조건을 처리하지 않습니다",
        "{num} 번이나 호출됩니다",
        "{num} 번째 줄에서 예외가 발생합니다",
        "\"{err}\" 라는 메시지가 나옵니다",
        "설계를 다시 검토해야 합니다",
        "예전 데이터 형식과 호환되지 않습니다",
        "운영 환경에서는 문제없이 동작합니다",
        "Windows 에서만 실패합니다",
        "{en} 최신 버전에 의존합니다",
        "요청이 몰리면 시간 초과가 발생합니다",
        "업데이트한 뒤로 시작되지 않습니다",
    ],
    endings: &[".", ".", ".", "!", "요."],
    connectors: &[
        "그런데",
        "그래서",
        "또한",
        "하지만",
        "사실",
        "먼저",
        "마지막으로",
        "즉",
        "일반적으로",
        "그리고",
        "참고로",
    ],
    questions: &[
        "어떻게 고쳐야 할까요?",
        "더 좋은 방법이 있을까요?",
        "한번 봐 주실 수 있나요?",
        "원인이 무엇일까요?",
        "어디부터 확인해야 하나요?",
        "이렇게 작성하는 게 맞나요?",
        "자세히 설명해 주실 수 있나요?",
    ],
    answers: &[
        "이 문제는 보통 {en} 설정이 잘못되어서 생깁니다.",
        "먼저 {cmd} 를 실행해서 출력을 확인해 보세요.",
        "`{func}` 함수를 두 개의 작은 함수로 나누는 것을 추천합니다.",
        "오류 메시지를 보면 {file} 의 {num} 번째 줄에 문제가 있습니다.",
        "이렇게 수정하면 성능이 약 {num}% 좋아집니다.",
        "반복문 안에서 매번 연결을 만들지 않도록 주의하세요.",
        "이미 계산한 결과는 해시맵에 캐시할 수 있습니다.",
        "그래도 문제가 있으면 전체 로그를 보내 주세요.",
        "{en} 버전이 문서에 적힌 것과 같은지 먼저 확인하세요.",
        "공유 상태를 읽기 전에 잠금을 먼저 거는 것이 핵심입니다.",
        "그리고 `{func}` 에는 단위 테스트를 추가하는 것이 좋습니다.",
    ],
    everyday: &[
        "지난 주말에 {place}에 다녀왔어요.",
        "거기서 먹은 {food}이 정말 맛있었어요.",
        "날씨가 {weather} 강가를 산책했어요.",
        "요즘 {exam} 준비 때문에 매일 늦게까지 공부하고 있어요.",
        "친구가 추천해 준 영화를 봤는데 {adj} 이야기였어요.",
        "내일 아침에는 {place}에서 회의가 있어요.",
        "{lang}를 공부하는 가장 좋은 방법이 뭐라고 생각하세요?",
        "어머니 생신 선물을 사고 싶어요.",
        "이 카페는 조용해서 책 읽기에 딱 좋아요.",
        "주말에는 집에서 {food}을 만들 생각이에요.",
        "그는 다음 달부터 새 일을 시작한대요.",
        "아이들은 방학 동안 매일 수영장에 가요.",
    ],
    comments: &[
        "설정 파일을 읽는다",
        "비어 있으면 바로 반환",
        "계산 결과를 캐시한다",
        "오류를 로그에 남긴다",
        "권한을 확인한다",
        "세 번까지 재시도",
        "결과를 데이터베이스에 다시 쓴다",
    ],
    headings: &[
        "문제 설명",
        "원인 분석",
        "해결 방법",
        "주의 사항",
        "다음 계획",
        "요약",
    ],
    places: &[
        "서울",
        "부산",
        "제주도",
        "인천",
        "대구",
        "광주",
        "경주",
        "강릉",
    ],
    foods: &["비빔밥", "김치찌개", "불고기", "떡볶이", "냉면", "삼겹살"],
    weather: &["좋아서", "추워서", "더워서", "흐려서"],
    exams: &["기말고사", "자격증 시험", "영어 시험", "수능"],
    adjectives: &["감동적인", "재미있는", "이상한", "슬픈", "따뜻한"],
    subjects_of_study: &["영어", "일본어", "프로그래밍", "수학", "피아노"],
};

const FILES: &[&str] = &[
    "src/main.rs",
    "lib/utils.py",
    "app/models/user.ts",
    "config/settings.yaml",
    "Cargo.toml",
    "package.json",
    "docs/README.md",
    "server/handlers/auth.go",
    "tests/test_api.py",
];
const FUNCS: &[&str] = &[
    "parse_config",
    "handleRequest",
    "get_user_by_id",
    "renderPage",
    "fetchData",
    "compute_hash",
    "init_logger",
    "retryWithBackoff",
    "load_settings",
];
const COMMANDS: &[&str] = &[
    "`cargo test`",
    "`npm run build`",
    "`git status`",
    "`pip install -r requirements.txt`",
    "`docker compose up -d`",
    "`go test ./...`",
    "`kubectl get pods`",
];
const ERRORS: &[&str] = &[
    "TypeError: Cannot read properties of undefined (reading 'id')",
    "connection refused",
    "index out of range",
    "permission denied",
    "ModuleNotFoundError: No module named 'requests'",
    "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value'",
    "ECONNRESET",
];
/// Katakana loanwords of a developer's Japanese, common and less common.
pub const KATAKANA: &[&str] = &[
    "ルートディレクトリ",
    "リポジトリ",
    "マイグレーション",
    "デプロイメント",
    "コンテナイメージ",
    "ロードバランサー",
    "タイムゾーン",
    "エンドポイント",
    "パフォーマンス",
    "リファクタリング",
    "アプリケーション",
    "フレームワーク",
    "コンポーネント",
    "プロパティ",
    "インスタンス",
    "パラメーター",
    "ネットワーク",
    "セキュリティ",
    "ダッシュボード",
    "ミドルウェア",
    "トランザクション",
    "シリアライズ",
    "バリデーション",
    "コールバック",
    "ワークフロー",
    "プルリクエスト",
    "ブランチ",
    "モジュール",
    "パッケージマネージャー",
    "レンダリング",
];
const ENGLISH: &[&str] = &[
    "API",
    "JSON",
    "HTTP",
    "Redis",
    "React",
    "Python",
    "Rust",
    "Kubernetes",
    "token",
    "Nginx",
    "PostgreSQL",
    "Docker",
    "TypeScript",
    "webpack",
];

/// A tiny deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.below(list.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Fills the slots of `template`.
fn fill(template: &str, w: &Words, rng: &mut Rng) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("closed slot");
        let slot = &rest[open + 1..close];
        let number;
        out.push_str(match slot {
            "file" => rng.pick(FILES),
            "func" => rng.pick(FUNCS),
            "cmd" => rng.pick(COMMANDS),
            "err" => rng.pick(ERRORS),
            "en" => rng.pick(ENGLISH),
            "place" => rng.pick(w.places),
            "food" => rng.pick(w.foods),
            "weather" => rng.pick(w.weather),
            "exam" => rng.pick(w.exams),
            "adj" => rng.pick(w.adjectives),
            "lang" => rng.pick(w.subjects_of_study),
            "kata" => rng.pick(KATAKANA),
            "num" => {
                number = match rng.below(3) {
                    0 => rng.below(10) + 2,
                    1 => rng.below(200) + 10,
                    _ => rng.below(9000) + 1000,
                }
                .to_string();
                &number
            }
            other => panic!("unknown slot {other}"),
        });
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A statement: optional connector, subject, predicate, ending.
fn statement(w: &Words, rng: &mut Rng) -> String {
    let mut s = String::new();
    if rng.chance(35) {
        s.push_str(rng.pick(w.connectors));
        if w.spaced {
            s.push(' ');
        } else if !s.ends_with('、') && rng.chance(50) {
            s.push('，');
        }
    }
    s.push_str(rng.pick(w.subjects));
    if w.spaced || w.name == "zh" && rng.chance(20) {
        s.push(' ');
    }
    s.push_str(&fill(rng.pick(w.predicates), w, rng));
    s.push_str(rng.pick(w.endings));
    s
}

fn join(w: &Words, sentences: Vec<String>) -> String {
    sentences.join(if w.spaced { " " } else { "" })
}

/// A code block whose comments are in the message's language.
fn code_block(w: &Words, rng: &mut Rng) -> String {
    let func = rng.pick(FUNCS);
    let (c1, c2) = (rng.pick(w.comments), rng.pick(w.comments));
    let n = rng.below(90) + 3;
    match rng.below(4) {
        0 => format!(
            "```python\ndef {func}(path, retries={n}):\n    # {c1}\n    with open(path, encoding=\"utf-8\") as f:\n        data = json.load(f)\n    if not data:\n        return []  # {c2}\n    return [item[\"id\"] for item in data.get(\"items\", [])]\n```"
        ),
        1 => format!(
            "```rust\nfn {func}(input: &str) -> Result<Vec<u32>, Error> {{\n    // {c1}\n    let items = input.split(',').map(str::trim);\n    // {c2}\n    items.map(|s| s.parse::<u32>().map_err(Error::from)).take({n}).collect()\n}}\n```"
        ),
        2 => format!(
            "```js\nasync function {func}(id) {{\n  // {c1}\n  const res = await fetch(`/api/users/${{id}}?limit={n}`);\n  if (!res.ok) throw new Error(res.statusText); // {c2}\n  return res.json();\n}}\n```"
        ),
        _ => format!(
            "```\n$ {} \nerror[E0{n:03}]: {}\n  --> {}:{}:{}\n```",
            rng.pick(COMMANDS).trim_matches('`'),
            rng.pick(ERRORS),
            rng.pick(FILES),
            rng.below(400) + 1,
            rng.below(60) + 1
        ),
    }
}

fn question(w: &Words, rng: &mut Rng) -> String {
    let mut parts: Vec<String> = (0..rng.below(3) + 1).map(|_| statement(w, rng)).collect();
    if rng.chance(25) {
        parts.push(format!("\n\n{}\n\n", code_block(w, rng)));
    }
    parts.push(rng.pick(w.questions).to_string());
    join(w, parts)
}

fn answer(w: &Words, rng: &mut Rng) -> String {
    let mut out = fill(rng.pick(w.answers), w, rng);
    out.push_str("\n\n");
    for k in 0..rng.below(4) + 2 {
        let item = if rng.chance(50) {
            fill(rng.pick(w.answers), w, rng)
        } else {
            statement(w, rng)
        };
        if rng.chance(50) {
            out.push_str(&format!("{}. {item}\n", k + 1));
        } else {
            out.push_str(&format!("- {item}\n"));
        }
    }
    if rng.chance(50) {
        out.push('\n');
        out.push_str(&code_block(w, rng));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&fill(rng.pick(w.answers), w, rng));
    out
}

fn everyday(w: &Words, rng: &mut Rng) -> String {
    let sentences = (0..rng.below(7) + 2)
        .map(|_| fill(rng.pick(w.everyday), w, rng))
        .collect();
    join(w, sentences)
}

fn notes(w: &Words, rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(3) + 2 {
        out.push_str(&format!("## {}\n\n", rng.pick(w.headings)));
        let sentences = (0..rng.below(6) + 2)
            .map(|_| {
                if rng.chance(30) {
                    fill(rng.pick(w.answers), w, rng)
                } else {
                    statement(w, rng)
                }
            })
            .collect();
        out.push_str(&join(w, sentences));
        out.push_str("\n\n");
    }
    out
}

/// The `index`th generated message: its language (`zh`, `ja`, `ko`) and text.
pub fn message(index: usize) -> (&'static str, String) {
    let w = [&ZH, &JA, &KO][index % 3];
    let mut rng = Rng(0xC0FF_EE00 ^ (index as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let text = match rng.below(4) {
        0 => question(w, &mut rng),
        1 => answer(w, &mut rng),
        2 => everyday(w, &mut rng),
        _ => notes(w, &mut rng),
    };
    (w.name, text)
}
