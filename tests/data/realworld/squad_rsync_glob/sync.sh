rsync -arvh \
    --exclude __pycache__ \
    --exclude data/glove.840B.300d \
    --exclude data/glove.840B.300d.zip \
    --exclude emb/* \
    --exclude emb.tar.gz \
    --exclude save \
    * gpu017:~/project/squad

rsync -arvh \
    --exclude __pycache__ \
    --exclude save \
    * stggpu001:~/project/squad
