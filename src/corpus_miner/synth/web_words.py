"""The built-in English of the web-page generator: words by part of speech (most common first),
sentence patterns, and the pieces site templates are made of (headers, menus, "read also" blocks,
disclaimers, footers, cookie banners).

Every word and every space-separated piece of a template is plain ASCII and holds exactly one
token of the project's tokenizer once punctuation is dropped (no apostrophes, no hyphens), so the
generator can count tokens without tokenizing. In templates, `{YEAR}`, `{NUMBER}`, `{NAME}` are
variable parts drawn for every page, and `{noun}`, `{adj}`, `{verb}` words drawn once per site.
"""

from __future__ import annotations

DETERMINERS = "the this every each our their its your one another that no".split()
PRONOUNS = "we they you people most many others some".split()
MODALS = "will can may should must could would might".split()
PREPOSITIONS = ("of in for on with at from by about into over after near under between "
                "through without before around across behind beyond along").split()
CONJUNCTIONS = "and but or so yet while because although when if since".split()

ADJECTIVES = """new old small large local green quiet simple modern bright fresh warm cold early
late long short busy open public private famous popular useful careful strong light heavy clean
safe easy hard happy clever friendly gentle wild natural healthy cheap expensive rare common daily
weekly annual digital electric wooden golden silver ancient young tiny huge deep wide narrow rich
real clear dark blue red white black yellow soft loud calm dry wet sharp smooth rough empty full
free final main central northern southern eastern western urban rural national global personal
special regular perfect famous honest proud brave kind polite curious serious funny strange
familiar different similar important possible social cultural historic seasonal organic classic
elegant practical reliable affordable comfortable beautiful colourful delicious crowded peaceful
remote hidden favourite handmade traditional creative independent""".split()

NOUNS = """garden house city river market team school family kitchen book car road window table
street village project report season recipe price plan phone computer camera bike bridge museum
library park beach forest mountain island hotel restaurant shop office station company festival
concert game match player coach teacher student doctor nurse farmer artist writer editor reader
customer neighbour friend child parent dog cat bird horse tree flower coffee bread cheese soup
salad cake tea water energy weather storm winter summer spring autumn morning evening weekend
holiday journey trip map ticket bag shirt jacket shoe lamp chair sofa bed door wall roof floor
engine battery screen keyboard printer network website app guide story article video photo song
album film event meeting class course lesson exam job career salary budget bank loan account card
gift box letter parcel order delivery bottle glass plate cup knife oven fridge heater boat train
plane airport harbour farm field hill lake valley coast path trail tower castle church square
corner council election law court hospital clinic pharmacy medicine diet workout habit hobby
puzzle toy robot sensor signal server database file folder password email message comment
question answer idea problem solution method tool hammer brush canvas poem novel chapter page
author audience stage studio owner manager worker driver pilot chef baker tailor scientist
engineer designer lawyer student volunteer visitor tourist guest host member leader partner
sponsor supplier brand product service feature price discount voucher offer sale deal
collection exhibition gallery theatre cinema stadium arena pool gym court bakery cafe
pharmacy market""".split()

VERBS = """build find make take give keep open share visit plan choose offer create improve
support protect explore follow change bring carry watch read write cook grow clean design test
repair sell buy order check compare describe discover enjoy hold join learn lead leave measure
move paint prepare print publish collect record remember replace review save serve show start
study teach train try use wash welcome answer ask call cover deliver explain fix help host invite
launch manage mark mix pack pick place produce provide reach receive reduce run send set sort
store track turn update upgrade wrap celebrate organise support restore plant harvest bake
photograph discuss present finish begin borrow rent book visit""".split()

ADVERBS = """often also still now usually always rarely simply never already soon together again
quickly slowly carefully really finally recently easily quietly gently early later today
tomorrow sometimes nearly almost certainly""".split()

# Sentence patterns: parts of speech, "," after a word that a comma follows. A sentence ends with
# a period.
D, A, N, V, M, P, C, R, B = "DET ADJ NOUN VERB MODAL PREP CONJ PRON ADV".split()
SENTENCES = (
    (D, A, N, M, V, D, N, P, D, N),
    (R, V, D, A, N, P, D, N),
    (P, D, N + ",", R, M, V, D, A, N),
    (D, N, P, D, N, M, B, V, D, N),
    (R, B, V, D, N, C, V, D, A, N),
    (D, N, M, V, D, N + ",", C, R, M, V, D, A, N),
    (R, V, D, N),
    (D, A, N, M, B, V, P, D, N),
    (C, R, V, D, N + ",", D, N, M, V, B),
    (R, M, V, D, A, N, C, D, A, N),
    (D, N, P, D, A, N, M, V, D, N, P, D, N),
    (B + ",", R, V, D, N, P, D, N),
    (D, A, N, V, D, N),
    (R, M, B, V, D, A, N, P, D, N + ",", C, D, N, M, V),
)

# Site names: "{adjective} {noun} {suffix}", e.g. "Silver Harbour Journal".
NAME_ADJECTIVES = """Green Silver Golden Northern Southern Eastern Western Daily Quiet Bright
Little Grand Urban Rural Modern Classic Open Wild Blue Red Royal Central Coastal Highland Happy
Clever Honest Fresh Simple Smart Sunny Windy Rocky Maple Cedar Iron Stone Crystal""".split()
NAME_NOUNS = """River Harbour Garden Valley Street Kitchen Market Bridge Forest Mountain Island
Village Square Tower Castle Lake Coast Field Hill Station Table Window Lantern Compass Anchor
Meadow Orchard Library Workshop Studio Atlas Beacon Circle Corner Canyon Falcon Fox Owl Oak
Pine""".split()
NAME_SUFFIXES = """News Times Journal Post Review Daily Weekly Guide Magazine Blog Hub Online Today
World Insider Digest Gazette Herald Tribune Chronicle Report Notes Life Living""".split()

TAGLINES = (
    "Independent news and analysis for curious readers",
    "Your daily guide to food, travel and culture",
    "Practical advice for home and garden",
    "Stories from the city and beyond",
    "The best deals, reviews and buying guides",
    "Science explained for everyone",
    "Local news, weather and events",
    "Recipes, tips and kitchen guides for busy families",
    "Technology news and honest product reviews",
    "Health, fitness and everyday wellbeing",
    "Books, films and music reviewed",
    "Travel ideas and city guides from local writers",
    "Everything you need to know about your money",
    "Gardening, cooking and slow living",
    "Sports results, interviews and match reports",
    "News for parents and teachers",
    "Cars, bikes and the roads between",
    "Art, design and the people behind it",
)
HEADER_EXTRAS = (
    "Menu | Search | Subscribe",
    "Sign in | Register",
    "Search this site",
    "Log in | Create an account | Help",
    "Subscribe now and save",
)
SECTIONS = """News|World|Business|Technology|Science|Health|Sports|Culture|Travel|Food|Opinion|
Events|About us|Contact|Shop|Blog|Archive|Help|Jobs|Podcasts|Video|Photos|Weather|Local|Politics|
Education|Environment|Style|Books|Music|Film|Television|Games|Recipes|Reviews|Deals|Gift guides|
Home and garden|Family|Money|Property|Cars|Motoring|Puzzles|Crosswords|Obituaries|Letters|
Newsletters|Community|Classifieds|Special offers|Gift cards|New arrivals|Best sellers|Sale|
Brands|Stores|Support|Returns|Delivery|Careers|Partners|Press|Advertise|Magazine|Live|Latest|
Popular|Features|Interviews|Guides|Topics""".replace("\n", "").split("|")

WIDGET_LEADS = ("Read also:", "Most read this week:", "Related stories:", "You may also like:",
                "Trending now:", "Popular on this site:", "Recommended for you:", "See also:")
WIDGET_TITLES = (
    "{NUMBER} {adj} ways to {verb} your {noun}",
    "How {NAME} learned to {verb} the {adj} {noun}",
    "The {YEAR} guide to the {adj} {noun}",
    "Why every {noun} needs a {adj} {noun} this year",
    "{NUMBER} things nobody tells you about the {noun}",
    "What {NAME} found inside the old {noun}",
    "Our {NUMBER} favourite places to {verb} this season",
    "A {adj} {noun} for {NUMBER} people",
)

DISCLAIMERS = (
    "The information on this site is provided for general purposes only and does not "
    "constitute professional advice.",
    "Prices and availability may change without notice.",
    "Consult a specialist before making any decision based on this article.",
    "The views expressed in this article are those of the author and do not necessarily "
    "reflect the views of our editors.",
    "We may earn a commission when you buy through links on this page.",
    "This article was last reviewed by {NAME} in {YEAR} for accuracy.",
    "Offers are valid for {NUMBER} days while stocks last.",
    "All trademarks belong to their respective owners.",
    "Results may vary from person to person.",
    "This page is updated regularly, but we cannot guarantee that every detail is complete or "
    "current.",
    "Always read the label and follow the directions for use.",
    "Past performance is not a reliable indicator of future results.",
    "Images are for illustration purposes only.",
    "No part of this publication may be reproduced without written permission from the "
    "publisher.",
    "If you notice an error, please contact our editorial team.",
    "Comments are moderated and may take up to {NUMBER} hours to appear.",
    "This content is sponsored by our partners and was reviewed by {NAME} before publication.",
    "The publisher accepts no liability for any loss arising from the use of this information.",
    "Terms and conditions apply to all offers on this site.",
    "Delivery times are estimates and may be longer during holidays.",
    "Some features may not be available in every region.",
    "Our reviews are independent and based on our own testing.",
    "Figures are correct at the time of publication in {YEAR} unless stated otherwise.",
    "This site is not affiliated with any government agency.",
)

COPYRIGHT = "Copyright {YEAR}"
RESERVED = "All rights reserved."
FOOTER_LINKS = ("Privacy policy", "Terms of use", "Cookie settings", "Contact us", "About us",
                "Careers", "Advertise with us", "Accessibility", "Sitemap", "Newsletter",
                "Help center", "Press", "Imprint", "Editorial standards", "RSS feeds",
                "Corrections")
FOOTER_CLOSINGS = (
    "Made by {NAME} and a team of {NUMBER} volunteers.",
    "Follow us on social media for daily updates.",
    "Serving readers since {YEAR} and proud of it.",
    "Questions or ideas? Write to our editor {NAME} today.",
    "Site maintained by {NAME} with help from our readers.",
    "Hosted with care on renewable energy.",
)
DATE_LINE = "Posted on {MONTH} {DAY} {YEAR}"

# Snippets of the CMS that every site shows now and then (odds per site).
SHARED_SNIPPETS = (
    # the cookie banner
    "We use cookies to improve your experience on our website and to show you relevant content. "
    "By continuing to browse, you agree to our use of cookies. Accept all | Manage settings",
    # the newsletter box
    "Subscribe to our newsletter and get the best stories delivered to your inbox every week. "
    "Join {NUMBER} readers who already receive it. We respect your privacy and you can "
    "unsubscribe at any time with one click.",
    # the share bar
    "Share this article on Facebook, Twitter, LinkedIn or by email. Print this page.",
    # the comment rules
    "Comments are open to registered members only. Please keep the discussion civil and on "
    "topic, and do not share personal information about yourself or others. Comments that "
    "contain links, advertising or abusive language will be removed by our moderators. This "
    "discussion has {NUMBER} comments so far, the most recent by {NAME} from our community. "
    "Read our community guidelines before you post.",
)
